"""A first script job: says where it ran and with which Python."""

import socket
import sys

print(f"hello from {socket.gethostname()}, Python {sys.version.split()[0]} in {sys.prefix}")
