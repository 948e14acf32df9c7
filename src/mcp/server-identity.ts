// The MCP server's name and version, apart from the server itself, so that the command line can
// say its version without loading the MCP SDK.
export const SERVER_NAME = 'agent-board';
export const SERVER_VERSION = '0.0.0-demo';
