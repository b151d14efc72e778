# Test helper: records every frame on every interface of the network namespace it runs in
# (AF_PACKET, root only) into the file argv[1], until SIGTERM. Run in a namespace cluster's switch
# namespace (ip netns exec tsmpi-ID-sw), it sees all traffic between the cluster's hosts; the
# --secure tests search the file for plaintext. Python because Node has no raw sockets.
import signal
import socket
import sys

ETH_P_ALL = 3
stopping = False


def stop(_signum, _frame):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, stop)
sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(ETH_P_ALL))
# A large receive buffer (FORCE: root may pass net.core.rmem_max): on a loaded machine this loop
# falls behind a job's burst, and the kernel drops what does not fit (a capture of 0.7 of 2.2 MB).
SO_RCVBUFFORCE = getattr(socket, 'SO_RCVBUFFORCE', 33)
sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 256 << 20)
sock.settimeout(0.1)
with open(sys.argv[1], 'wb') as out:
    print('capturing', flush=True)
    while not stopping:
        try:
            frame = sock.recv(1 << 18)
        except socket.timeout:
            continue
        out.write(frame)
    out.flush()
print('stopped', flush=True)
