// Greps every file under a directory (logs, data the services wrote, the Redis append-only file) for secrets,
// as raw bytes, so a secret in a binary file or a half-written line is found too.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

export interface SecretHit {
  file: string;
  secret: string;
}

function* filesUnder(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(full);
    else if (entry.isFile()) yield full;
  }
}

/** every (file, secret) where the secret's bytes occur; secrets are named by `label` in the result, never shown */
export function scanForSecrets(dir: string, secrets: Readonly<Record<string, string>>): { files: number; bytes: number; hits: Array<{ file: string; label: string }> } {
  const hits: Array<{ file: string; label: string }> = [];
  let files = 0;
  let bytes = 0;
  for (const file of filesUnder(dir)) {
    const data = readFileSync(file);
    files++;
    bytes += statSync(file).size;
    for (const [label, secret] of Object.entries(secrets)) {
      if (secret.length > 0 && data.includes(Buffer.from(secret, 'utf8'))) hits.push({ file: path.relative(dir, file), label });
    }
  }
  return { files, bytes, hits };
}
