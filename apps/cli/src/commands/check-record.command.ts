// rx check-record <run dir>: see apps/controller/src/exchange/record-commands.ts (the controller's own command).
import { runController } from './controller-process';

export function run(argv: string[]): Promise<number> {
  return runController('check-record', argv);
}
