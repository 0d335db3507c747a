export * from './common';
export * from './auth';
export * from './sites';
export * from './subscribers';
export * from './uploads';
export * from './notifications';
export * from './tracking';
export * from './analytics';
