// Taking an anonymous board over (/boards/{projectId}/claim#nonce): the link a board's agent hands
// a person. Being built (issue 15).

export function ClaimBoardPage({ projectId }: { projectId: string }) {
  return <p class="muted">Claim {projectId}: not built yet.</p>;
}
