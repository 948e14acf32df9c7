// The browser board's pages and assets (src/web/bundle.ts): every page path answers index.html,
// which routes in the page; assets are immutable (their names carry their content hash).
// The operator console's pages (/admin...) and its code (/admin/assets/..., a chunk the page loads
// only there) pass the operator gate first: to anyone else they are an unknown path (404).
import { AppError } from '../errors/app-error.js';
import { defineRoute, type Reply, type Route } from '../http/route.js';
import { adminBase } from './admin-shared.js';
import { CONTENT_SECURITY_POLICY, type WebBundle } from '../web/bundle.js';

/** The paths the page routes itself (docs/people.md#the-browser-board). */
export const PAGE_PATHS = [
  '/',
  '/signin',
  '/signup',
  '/forgot-password',
  '/reset-password',
  '/verify-email',
  '/projects',
  '/boards/{projectId}',
  '/boards/{projectId}/items/{workId}',
  '/boards/{projectId}/members',
  '/boards/{projectId}/insights',
  '/boards/{projectId}/claim',
  '/invitations/{invitationId}',
  '/device',
  '/account',
  '/account/{section}',
] as const;

/** The operator console's paths (web/src/admin), served only to an operator's own session. */
export const ADMIN_PAGE_PATHS = [
  '/admin',
  '/admin/{section}',
  '/admin/users/{userId}',
  '/admin/money/{userId}',
] as const;

const PAGE_HEADERS = {
  'cache-control': 'no-cache',
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

export function webRoutes(bundle: WebBundle): Route[] {
  const base = { group: 'pages', auth: 'none', bodyKind: 'none', rate: 'none' } as const;
  const page = (): Reply => {
    if (bundle.index === null)
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        'The browser board is not built on this node: run npm run build:web (npm start does it).',
      );
    return { status: 200, body: bundle.index, contentType: 'text/html; charset=utf-8', headers: PAGE_HEADERS };
  };
  return [
    ...PAGE_PATHS.map((path) =>
      defineRoute({
        ...base,
        method: 'get',
        path,
        summary: 'A page of the browser board (the same document for every page path; it routes itself).',
        errors: ['SERVICE_UNAVAILABLE'],
        responses: { 200: { description: 'HTML page.', contentType: 'text/html' } },
        handler: page,
      }),
    ),
    ...ADMIN_PAGE_PATHS.map((path) =>
      defineRoute({
        ...base,
        ...adminBase,
        group: 'pages',
        method: 'get',
        path,
        summary:
          'A page of the operator console (the browser board’s document; it loads the console’s code). To anyone but an operator, an unknown path.',
        errors: ['SERVICE_UNAVAILABLE'],
        responses: { 200: { description: 'HTML page.', contentType: 'text/html' } },
        handler: page,
      }),
    ),
    defineRoute({
      ...base,
      ...adminBase,
      group: 'pages',
      method: 'get',
      path: '/admin/assets/{file}',
      summary: 'A script or style sheet of the operator console, only for operators; named by its content hash.',
      errors: [],
      responses: { 200: { description: 'The file.', contentType: 'application/octet-stream' } },
      handler: ({ ctx }) => {
        const file = bundle.adminAssets?.get(ctx.params.file!);
        if (!file)
          throw new AppError('NOT_FOUND', 'No such asset: the page may be older than this node’s build; reload it.');
        // private: a shared cache must not hand an operator's file to anyone else.
        return {
          status: 200,
          body: file.body,
          contentType: file.contentType,
          headers: { 'cache-control': 'private, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' },
        };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/assets/{file}',
      summary: 'A script, style sheet or image of the browser board; named by its content hash, so cached for a year.',
      errors: ['NOT_FOUND'],
      responses: { 200: { description: 'The file.', contentType: 'application/octet-stream' } },
      handler: ({ ctx }) => {
        const file = bundle.assets.get(ctx.params.file!);
        if (!file)
          throw new AppError('NOT_FOUND', 'No such asset: the page may be older than this node’s build; reload it.');
        return {
          status: 200,
          body: file.body,
          contentType: file.contentType,
          headers: { 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' },
        };
      },
    }),
  ];
}
