export * from './policy-backend';
export * from './renderer';
