// The typed client (@agent-board/client) as the MCP server and the CLI import it. The package exports
// its TypeScript source, which the compiled server (dist/, the Docker image) cannot load; through a
// relative path tsc compiles the client with the server, so one client serves every runtime.
export * from '../../client/src/index.js';
