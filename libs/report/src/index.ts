export * from './run-data';
export * from './histogram';
export * from './report-model';
export { COLORS, paddedRange, type ChartSpec, type ReportChartConfig, type SectionId } from './chart-spec';
export { fmt } from './number-format';
export * from './report-html';
export * from './report-writer';
export * from './provenance';
