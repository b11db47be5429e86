// rx run --spec <spec.json> [--backend embedded|tinker] [--services spawn|external] [--out <dir>] [--resume <dir>]
//        [--override <json-file>] [--port <n>|off]
// Runs a whole pre-registered experiment (apps/controller): preflight, shared initialisation, pilot and gates,
// both arms through the services, greedy evaluation, the decision and the run record.
import { runController } from './controller-process';

export function run(argv: string[]): Promise<number> {
  return runController(argv);
}
