export * from './paired-hoeffding';
export * from './pearson';
export * from './percentile';
export * from './paired-items';
export * from './seeded-random';
