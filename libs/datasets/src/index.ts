export {};
export * from './seeded-shuffle';
export * from './problem';
export * from './arith';
export * from './dev-split';
export * from './gsm8k';
export * from './gsm8k-hub';
