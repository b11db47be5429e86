// rx status <run dir> [--json]: phases done, steps per arm, the gate table, evaluation, decision and verdict.
import { runController } from './controller-process';

export function run(argv: string[]): Promise<number> {
  return runController('status', argv);
}
