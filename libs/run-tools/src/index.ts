// @rx/run-tools: what the rx CLI does with a run directory in its own process, reading its files and never
// starting a controller: rx status (run-status.ts), rx export and rx check-record (exchange/), and the export and
// check rx run ends with (exchange/exchange-lines.ts).
export * from './run-status';
export * from './format-duration';
export { buildExchangeRecord, EXCHANGE_DIR, EXCHANGE_RECORD, ExportError, readRunSpec } from './exchange/exchange-export';
export { checkRunRecord, type RunRecordCheck } from './exchange/check-run-record';
export { exchangeCheckLines, exportAndCheck, recheck, type ExchangeCheck } from './exchange/exchange-lines';
