// Uploaded resource files in an S3-compatible object store (AWS S3, MinIO, Ceph, Garage), with the
// AWS SDK v3. Keys: <prefix>resources/<resource id>; uploads in flight: <prefix>staging/<uuid>.
// An upload is sent as a streamed multipart upload to a staging key before its action's transaction
// begins (the API: prestage) or while it is open (pages), so a store that is down fails the action
// with a 503 and nothing changes; it is copied to its place once the transaction has committed.
// Removals also wait for the commit.
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ConfigError, type Config } from '../config/load.ts';
import type { UploadedFile } from '../context.ts';
import { StorageUnavailableError, type AfterCommitWork, type ByteRange, type FileStore, type StoredFile } from './store.ts';

/** Staged uploads older than this are left over from actions that failed after staging (swept at start). */
const STALE_STAGING_MS = 24 * 3600_000;
/** Parts uploaded at once per upload: memory per upload is about this many parts. */
const QUEUE_SIZE = 4;

const statusOf = (e: unknown) => (e as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
const notFound = (e: unknown) => statusOf(e) === 404 || (e as Error)?.name === 'NotFound' || (e as Error)?.name === 'NoSuchKey';

/** What went wrong, in a word (never credentials): the store's error name and status, or the network error's code. */
const reasonOf = (e: unknown) =>
  e instanceof S3ServiceException
    ? `${e.name}${statusOf(e) ? ` (HTTP ${statusOf(e)})` : ''}`
    : ((e as NodeJS.ErrnoException)?.code ?? (e as Error)?.name ?? 'error');

/** Any failure of the store as the 503 the caller sees. */
function unavailable(e: unknown, what: string): StorageUnavailableError {
  if (e instanceof StorageUnavailableError) return e;
  return new StorageUnavailableError(`The file storage is not available (${what}: ${reasonOf(e)}); try again later`);
}

export class S3FileStore implements FileStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(private readonly config: Config) {
    this.bucket = config.str('svc.storage.s3.bucket');
    this.prefix = config.str('svc.storage.s3.prefix');
    const endpoint = config.str('svc.storage.s3.endpoint');
    const accessKeyId = config.str('svc.storage.s3.access_key_id');
    this.client = new S3Client({
      region: config.str('svc.storage.s3.region'),
      ...(endpoint ? { endpoint } : {}),
      forcePathStyle: config.bool('svc.storage.s3.force_path_style'),
      ...(accessKeyId ? { credentials: { accessKeyId, secretAccessKey: config.str('svc.storage.s3.secret_access_key') } } : {}),
      maxAttempts: 3,
      // A store that does not answer fails the request within seconds instead of holding it.
      requestHandler: { connectionTimeout: 5000, requestTimeout: 60_000 },
      // Checksums only where S3 requires them: not every S3-compatible service knows the newer ones.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  private key(resourceId: string): string {
    return `${this.prefix}resources/${resourceId}`;
  }

  async check(): Promise<void> {
    const where = `bucket "${this.bucket}"${this.config.str('svc.storage.s3.endpoint') ? ` at ${this.config.str('svc.storage.s3.endpoint')}` : ''}`;
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (e) {
      const status = statusOf(e);
      const why =
        status === 404
          ? 'it does not exist'
          : status === 403
            ? 'access denied (check svc.storage.s3.access_key_id and secret_access_key)'
            : `it cannot be reached (${reasonOf(e)})`;
      throw new ConfigError(`svc.storage.backend = s3: the ${where} cannot be used: ${why}`);
    }
    const probe = `${this.prefix}staging/write-check-${randomUUID()}`;
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: probe, Body: 'svc write check' }));
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: probe }));
    } catch (e) {
      throw new ConfigError(`svc.storage.backend = s3: the ${where} refuses writes (${reasonOf(e)}): svc needs to put and delete objects`);
    }
    await this.sweepStaging().catch(() => undefined);
  }

  /** Removes staged uploads that never made it into place (their action failed after staging). */
  private async sweepStaging(): Promise<void> {
    const before = Date.now() - STALE_STAGING_MS;
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: `${this.prefix}staging/`, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? [])
        if (o.Key && o.LastModified && o.LastModified.getTime() < before)
          await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: o.Key }));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /** Uploads sent before their action (prestage), by file: the staged key, and whether an action put it in place. */
  private readonly early = new WeakMap<UploadedFile, { key: Promise<string>; placed: boolean }>();

  async prestage(file: UploadedFile): Promise<void> {
    const key = this.upload(file);
    this.early.set(file, { key, placed: false });
    await key;
  }

  async release(file: UploadedFile): Promise<void> {
    const early = this.early.get(file);
    this.early.delete(file);
    if (!early || early.placed) return;
    const key = await early.key.catch(() => null);
    if (key) await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })).catch(() => undefined);
  }

  async stage(resourceId: string, file: UploadedFile): Promise<AfterCommitWork> {
    const early = this.early.get(file);
    const staged = early ? await early.key : await this.upload(file);
    return async () => {
      await this.putInPlace(staged, resourceId);
      if (early) early.placed = true;
    };
  }

  /** Sends the upload's bytes to a new staging key as a streamed multipart upload. */
  private async upload(file: UploadedFile): Promise<string> {
    const staged = `${this.prefix}staging/${randomUUID()}`;
    // The checksum is computed while the upload arrives: ready by now or nearly.
    const sha256 = await file.sha256?.catch(() => undefined);
    try {
      const upload = new Upload({
        client: this.client,
        params: {
          Bucket: this.bucket,
          Key: staged,
          Body: fs.createReadStream(file.path),
          ContentType: file.mimetype || 'application/octet-stream',
          Metadata: sha256 ? { sha256 } : {},
        },
        partSize: this.config.int('svc.storage.s3.part_size') * 1024 * 1024,
        queueSize: QUEUE_SIZE,
        leavePartsOnError: false,
      });
      await upload.done();
    } catch (e) {
      throw unavailable(e, 'storing the upload');
    }
    return staged;
  }

  /** Copies a staged upload to the resource's key (retried: the action has committed), then drops the staged copy. */
  private async putInPlace(staged: string, resourceId: string): Promise<void> {
    const source = `${this.bucket}/${staged.split('/').map(encodeURIComponent).join('/')}`;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: this.key(resourceId), CopySource: source }));
        break;
      } catch (e) {
        if (attempt >= 5)
          throw new Error(
            `the upload of resource ${resourceId} is kept at ${staged} in bucket ${this.bucket}: copying it to ${this.key(resourceId)} failed (${(e as Error).name})`,
          );
        await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
      }
    }
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: staged })).catch(() => undefined);
  }

  async remove(resourceId: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(resourceId) }));
    } catch (e) {
      throw unavailable(e, `removing the file of resource ${resourceId}`);
    }
  }

  async stat(resourceId: string): Promise<StoredFile | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(resourceId) }));
      const sha256 = head.Metadata?.sha256;
      return { size: head.ContentLength ?? 0, sha256: sha256 && /^[0-9a-f]{64}$/.test(sha256) ? sha256 : null };
    } catch (e) {
      if (notFound(e)) return null;
      throw unavailable(e, 'reading a file');
    }
  }

  async read(resourceId: string, range?: ByteRange): Promise<Readable> {
    try {
      const got = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.key(resourceId),
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      return got.Body instanceof Readable ? got.Body : Readable.from(await got.Body!.transformToByteArray());
    } catch (e) {
      throw unavailable(e, 'reading a file');
    }
  }

  async downloadUrl(resourceId: string, opts: { contentType: string }): Promise<string | null> {
    if (!this.config.bool('svc.storage.s3.presigned_downloads')) return null;
    return getSignedUrl(
      this.client,
      new GetObjectCommand({ Bucket: this.bucket, Key: this.key(resourceId), ResponseContentType: opts.contentType }),
      { expiresIn: this.config.int('svc.storage.s3.presigned_expiry') },
    );
  }

  async localFile(resourceId: string, spare: string, waitMs: number) {
    const end = Date.now() + waitMs;
    let stored = await this.stat(resourceId);
    while (!stored) {
      if (Date.now() > end) return null;
      await new Promise((r) => setTimeout(r, 200));
      stored = await this.stat(resourceId);
    }
    try {
      await pipeline(await this.read(resourceId), fs.createWriteStream(spare));
    } catch (e) {
      throw unavailable(e, 'fetching a file');
    }
    return { ...stored, path: spare, size: fs.statSync(spare).size };
  }

  close(): void {
    this.client.destroy();
  }
}
