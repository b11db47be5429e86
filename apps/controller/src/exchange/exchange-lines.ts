// The exchange record as rx run ends with it (exported, then checked) and as rx status shows it.
import { checkRunRecord } from './check-run-record';
import { buildExchangeRecord, ExportError } from './exchange-export';

/** rx run's last step: the exchange record written and checked; the lines to print (a failure to export is one) */
export function exportAndCheck(dir: string): string[] {
  try {
    buildExchangeRecord(dir);
    return checkRunRecord(dir).lines;
  } catch (err) {
    return [`not written: ${(err as Error).message}`];
  }
}

/** rx status: the check of the exchange record when one was exported (null when none was) */
export function exchangeCheckLines(dir: string): string[] | null {
  try {
    return checkRunRecord(dir).lines;
  } catch (err) {
    return err instanceof ExportError && /is missing/.test(err.message) ? null : [`cannot be checked: ${(err as Error).message}`];
  }
}
