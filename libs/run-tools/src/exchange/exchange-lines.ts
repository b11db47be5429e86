// The exchange record as rx run ends with it (exported, then checked) and as rx status shows it.
import { checkRunRecord } from './check-run-record';
import { buildExchangeRecord, ExportError } from './exchange-export';

/** The exchange record's check as rx run reports it: the lines to print, and whether every validator passed. */
export interface ExchangeCheck {
  lines: string[];
  /** false when the record could not be written, does not follow the schema, or fails a validator */
  pass: boolean;
}

/** rx run's last step: the exchange record written and checked (a failure to export is one line, and fails) */
export function exportAndCheck(dir: string): ExchangeCheck {
  try {
    buildExchangeRecord(dir);
    const { check, lines } = checkRunRecord(dir);
    return { lines, pass: check.ok && check.pass };
  } catch (err) {
    return { lines: [`not written: ${(err as Error).message}`], pass: false };
  }
}

/** a finished run's exchange record checked again as it is on disk (rx run --resume of a complete run) */
export function recheck(dir: string): ExchangeCheck {
  try {
    const { check, lines } = checkRunRecord(dir);
    return { lines, pass: check.ok && check.pass };
  } catch (err) {
    return { lines: [`cannot be checked: ${(err as Error).message}`], pass: false };
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
