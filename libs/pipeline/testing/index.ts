// Test doubles and fixtures of the pipeline (type:testing: tests and tools only).
export * from './arithmetic-problems';
export * from './ledger.contract';
export * from './recording-producer';
export * from './stand-in-stage';
export * from './step-requests';
export * from './window-store.contract';
