// The device-approval page (/device, the device flow's verificationUri): a signed-in person picks
// the board and approves or denies an agent's request. Being built (issue 15).

export function DevicePage() {
  return <p class="muted">Device approval: not built yet.</p>;
}
