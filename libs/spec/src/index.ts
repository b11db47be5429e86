export * from './experiment-spec.schema';
export * from './parse-spec';
export * from './spec-accessors';
export * from './spec-override';
export * from './spec-revision.schema';
