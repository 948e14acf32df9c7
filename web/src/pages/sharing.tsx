// Sharing a board: its members and invitations (/boards/{projectId}/members), and the page an
// invitation link opens (/invitations/{invitationId}#token). Being built (issue 15).

export function MembersPage({ projectId }: { projectId: string }) {
  return <p class="muted">Members of {projectId}: not built yet.</p>;
}

export function InvitationPage({ invitationId }: { invitationId: string }) {
  return <p class="muted">Invitation {invitationId}: not built yet.</p>;
}
