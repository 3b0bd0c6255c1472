/** The functional core in one import: scoring, decisions, budget guards and the strategy format. */
export * from './budget.js';
export * from './decide-listing.js';
export * from './decide-open.js';
export * from './decide-pull.js';
export * from './distribution.js';
export * from './listing-model.js';
export * from './pull-policy.js';
export * from './score.js';
export * from './strategy-schema.js';
