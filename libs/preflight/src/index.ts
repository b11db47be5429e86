export * from './importance-sampling';
export * from './importance-sampling.reference';
export * from './tolerance-check';
export * from './preflight-result.schema';
export * from './update-direction';
