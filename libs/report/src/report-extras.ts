// What the report reads from the run directory beside RunData: the provenance block, the discordant items of the
// two arms and each arm's metrics.jsonl.
import { discordantItems, readProvenance, type DiscordantItem, type Provenance } from './provenance';
import type { RunData } from './run-data';
import { readArmCurves, type ArmCurves } from './step-curves';

export interface ReportExtras {
  provenance: Provenance;
  /** null when the treatment or the baseline arm is not known */
  discordant: { items: DiscordantItem[]; total: number; treatment: string; baseline: string } | null;
  /** each arm's metrics.jsonl */
  curves: ArmCurves[];
}

/** the provenance block, the discordant items and the metrics.jsonl curves of a run, read from its directory */
export function readReportExtras(run: RunData): ReportExtras {
  return {
    provenance: readProvenance(run.root),
    discordant: run.treatment && run.baseline ? { ...discordantItems(run.root, run.treatment, run.baseline), treatment: run.treatment, baseline: run.baseline } : null,
    curves: readArmCurves(run.root, run.arms.map((a) => a.name)),
  };
}
