// Worker of late-init.ts: keeps its event loop alive and never calls MPI.init,
// as a thread still loading its modules would look to the roll-call.
setInterval(() => undefined, 1 << 30);
