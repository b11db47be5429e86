export {};
export * from './seeded-shuffle';
