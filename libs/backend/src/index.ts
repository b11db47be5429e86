export * from './policy-backend';
export * from './renderer';
export * from './tinker';
export * from './testing';
export * from './char-renderer';
