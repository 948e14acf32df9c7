// The browser board's pages and assets (src/web/bundle.ts): every page path answers index.html,
// which routes in the page; assets are immutable (their names carry their content hash).
import { AppError } from '../errors/app-error.js';
import { defineRoute, type Reply, type Route } from '../http/route.js';
import { CONTENT_SECURITY_POLICY, type WebBundle } from '../web/bundle.js';

/** The paths the page routes itself (README "The browser board"). */
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
  '/boards/{projectId}/claim',
  '/invitations/{invitationId}',
  '/device',
  '/account',
  '/account/{section}',
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
    if (bundle.index === null) throw new AppError('SERVICE_UNAVAILABLE', 'The browser board is not built on this node: run npm run build:web (npm start does it).');
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
    defineRoute({
      ...base,
      method: 'get',
      path: '/assets/{file}',
      summary: 'A script, style sheet or image of the browser board; named by its content hash, so cached for a year.',
      errors: ['NOT_FOUND'],
      responses: { 200: { description: 'The file.', contentType: 'application/octet-stream' } },
      handler: ({ ctx }) => {
        const file = bundle.assets.get(ctx.params.file!);
        if (!file) throw new AppError('NOT_FOUND', 'No such asset: the page may be older than this node’s build; reload it.');
        return { status: 200, body: file.body, contentType: file.contentType, headers: { 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' } };
      },
    }),
  ];
}
