export * from './budget-charges';
export * from './plan';
export * from './plan-cost';
export * from './plan-decision';
export * from './plan-text';
export * from './price-table';
export * from './timing-table';
