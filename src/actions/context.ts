// The action context types live in src/context.ts (below the actions layer); re-exported here.
export { ANONYMOUS } from '../context.ts';
export type { ActionContext, AfterCommit, Identity, Services, UploadedFile } from '../context.ts';
