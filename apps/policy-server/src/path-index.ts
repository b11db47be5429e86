// The tinker:// paths this server handed out, mapped to the backend's own paths (embedded://…, memory://…).
// Kept in <RX_DATA_DIR>/tinker-paths.json so a restarted server still resolves saved states and weights.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

const entrySchema = z.object({ backendPath: z.string().min(1), baseModel: z.string().min(1), loraRank: z.number().int().positive().optional() });
const fileSchema = z.object({ version: z.literal(1), paths: z.record(z.string(), entrySchema) });
export type PathEntry = z.infer<typeof entrySchema>;

export class PathIndex {
  private readonly paths = new Map<string, PathEntry>();

  /** Loads the index of `dataDir`, or starts empty; `persist: false` keeps it in memory only. */
  constructor(
    private readonly dataDir: string,
    private readonly persist = true,
  ) {
    const file = this.file;
    if (!persist || !fs.existsSync(file)) return;
    const parsed = fileSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    if (!parsed.success) throw new Error(`${file} is not a tinker path index (${parsed.error.issues[0]?.message ?? 'bad shape'}); move it away`);
    for (const [k, v] of Object.entries(parsed.data.paths)) this.paths.set(k, v);
  }

  get file(): string {
    return path.join(this.dataDir, 'tinker-paths.json');
  }

  get(tinkerPath: string): PathEntry | undefined {
    return this.paths.get(tinkerPath);
  }

  has(tinkerPath: string): boolean {
    return this.paths.has(tinkerPath);
  }

  set(tinkerPath: string, entry: PathEntry): void {
    this.paths.set(tinkerPath, entry);
    if (!this.persist) return;
    fs.mkdirSync(this.dataDir, { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify({ version: 1, paths: Object.fromEntries(this.paths) }, null, 1));
    fs.renameSync(tmp, this.file);
  }
}
