// Per-step curves from each arm's metrics.jsonl (the controller's flat per-step metrics): the format rate and the
// mean completion length, per arm.
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { stepMetricsLineSchema, type StepMetricsLine } from '@rx/contracts';

export interface ArmCurves {
  arm: string;
  lines: StepMetricsLine[];
}

/** the metrics.jsonl lines of each arm that has them (lines that do not parse are left out) */
export function readArmCurves(root: string, arms: readonly string[]): ArmCurves[] {
  const curves: ArmCurves[] = [];
  for (const arm of arms) {
    const file = path.join(root, arm, 'metrics.jsonl');
    if (!existsSync(file)) continue;
    const lines: StepMetricsLine[] = [];
    for (const text of readFileSync(file, 'utf8').split('\n')) {
      if (text.trim() === '') continue;
      try {
        const parsed = stepMetricsLineSchema.safeParse(JSON.parse(text));
        if (parsed.success) lines.push(parsed.data);
      } catch {
        // not JSON: left out
      }
    }
    if (lines.length > 0) curves.push({ arm, lines });
  }
  return curves;
}
