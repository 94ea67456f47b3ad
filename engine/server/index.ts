export { createServer, type CreateServerOptions } from './app.js';
export {
  startLocalServer,
  readCredentials,
  writeCredentials,
  CREDENTIALS_FILE,
  DATABASE_FILE,
  type LocalServer,
  type LocalServerOptions,
  type Credentials,
} from './local.js';
export { ROLE_ACTIONS, can, type Action } from './permissions.js';
export { DEFAULT_LIMITS, type Bucket } from './rate-limit.js';
