#!/usr/bin/python3
"""Listens on a unix datagram socket like systemd's NOTIFY_SOCKET and prints each message on one
line. usage: notify-socket.py PATH (prints READY first)."""
import os
import socket
import sys

path = sys.argv[1]
try:
    os.unlink(path)
except FileNotFoundError:
    pass
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
print("LISTENING", flush=True)
while True:
    data = sock.recv(65536)
    print(" ".join(data.decode().split("\n")).strip(), flush=True)
