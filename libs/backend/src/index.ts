export * from './policy-backend';
