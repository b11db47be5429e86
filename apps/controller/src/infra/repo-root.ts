// The repository root, for the controller's phases (sources hashed into the record, data, checkpoints).
export { REPO_ROOT } from '@rx/local-stack';
