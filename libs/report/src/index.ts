export * from './run-data';
export * from './histogram';
export * from './report-model';
export * from './report-html';
export * from './report-writer';
export * from './provenance';
