// Progress of a run: one live line per arm on a terminal (redrawn in place), plain lines otherwise (logs, CI).
// Messages print above the live block. Each arm line: phase, step, reward, gate values, ETA.
import { formatDuration } from '@rx/run-tools';

export interface ArmProgress {
  phase: string;
  step?: number;
  steps?: number;
  /** what step counts: training steps (default) or evaluation items */
  unit?: 'step' | 'item';
  reward?: number;
  /** gate values to show, e.g. { ess_p10: 9.3, nonzero: 0.92 } */
  gates?: Record<string, number>;
  etaSeconds?: number;
  note?: string;
}

export interface ProgressReporter {
  /** a line of its own (phase starts, results) */
  info(line: string): void;
  warn(line: string): void;
  arm(arm: string, p: ArmProgress): void;
  /** the live block is left as it is and later output starts below it */
  close(): void;
}

export function formatArmLine(arm: string, p: ArmProgress): string {
  const parts = [arm.padEnd(12), p.phase.padEnd(9)];
  if (p.step !== undefined) parts.push(`${p.unit ?? 'step'} ${p.step}${p.steps !== undefined ? `/${p.steps}` : ''}`);
  if (p.reward !== undefined) parts.push(`reward ${p.reward.toFixed(3)}`);
  for (const [k, v] of Object.entries(p.gates ?? {})) parts.push(`${k} ${Number.isInteger(v) ? v : v.toFixed(2)}`);
  if (p.etaSeconds !== undefined) parts.push(`ETA ${formatDuration(p.etaSeconds)}`);
  if (p.note) parts.push(p.note);
  return parts.join('  ');
}

export interface StreamLike {
  write(chunk: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

/** Plain lines: every arm update is a line. */
export class PlainProgress implements ProgressReporter {
  constructor(private readonly out: StreamLike, private readonly err: StreamLike = out) {}
  info(line: string): void {
    this.out.write(`${line}\n`);
  }
  warn(line: string): void {
    this.err.write(`warning: ${line}\n`);
  }
  arm(arm: string, p: ArmProgress): void {
    this.out.write(`${formatArmLine(arm, p)}\n`);
  }
  close(): void {}
}

/** A block of one line per arm at the bottom of the terminal, redrawn with ANSI cursor moves. */
export class LiveProgress implements ProgressReporter {
  private readonly lines = new Map<string, string>();
  private drawn = 0;

  constructor(private readonly out: StreamLike) {}

  private clearBlock(): void {
    if (this.drawn > 0) this.out.write(`\x1b[${this.drawn}A\x1b[J`);
    this.drawn = 0;
  }

  private drawBlock(): void {
    const width = Math.max(20, (this.out.columns ?? 120) - 1);
    const text = [...this.lines.values()].map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l));
    if (text.length > 0) this.out.write(`${text.join('\n')}\n`);
    this.drawn = text.length;
  }

  info(line: string): void {
    this.clearBlock();
    this.out.write(`${line}\n`);
    this.drawBlock();
  }
  warn(line: string): void {
    this.info(`warning: ${line}`);
  }
  arm(arm: string, p: ArmProgress): void {
    this.clearBlock();
    this.lines.set(arm, formatArmLine(arm, p));
    this.drawBlock();
  }
  close(): void {
    this.lines.clear();
    this.drawn = 0;
  }
}

export function progressFor(out: StreamLike, err: StreamLike): ProgressReporter {
  return out.isTTY ? new LiveProgress(out) : new PlainProgress(out, err);
}

/** Silent (tests that do not look at progress). */
export class NullProgress implements ProgressReporter {
  readonly lines: string[] = [];
  info(line: string): void {
    this.lines.push(line);
  }
  warn(line: string): void {
    this.lines.push(`warning: ${line}`);
  }
  arm(arm: string, p: ArmProgress): void {
    this.lines.push(formatArmLine(arm, p));
  }
  close(): void {}
}
