export * from './importance-sampling';
export * from './importance-sampling.reference';
export * from './tolerance-check';
