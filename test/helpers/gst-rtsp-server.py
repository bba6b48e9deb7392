#!/usr/bin/python3
"""A real RTSP server for Argus' integration tests, built on GStreamer's RTSP server library
(the one many IP cameras and camera emulators use). RTP over UDP and TCP.

usage: gst-rtsp-server.py --port N [--auth USER:PASSWORD [--auth-method basic|digest]] [--unshared]
                         --mount NAME=LAUNCH [--mount ...]

A mount's media is shared by its clients unless --unshared: then every DESCRIBE builds a pipeline
of its own, so a media that failed (the server caches a shared one, failed or not, and answers
503 to every later DESCRIBE of it) never outlives the client that met it.
Prints "READY <port>" on stdout once it listens.
"""
import argparse
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtsp", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtsp, GstRtspServer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--auth")
    parser.add_argument("--auth-method", choices=["basic", "digest"], default="basic")
    parser.add_argument("--mount", action="append", default=[])
    parser.add_argument("--unshared", action="store_true")
    args = parser.parse_args()

    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_service(str(args.port))
    mounts = server.get_mount_points()
    for spec in args.mount:
        name, launch = spec.split("=", 1)
        factory = GstRtspServer.RTSPMediaFactory()
        factory.set_launch(launch)
        factory.set_shared(not args.unshared)
        if args.auth:
            factory.add_role_from_structure(
                Gst.Structure.from_string("user, media.factory.access=(boolean)true, media.factory.construct=(boolean)true")[0]
            )
        mounts.add_factory("/" + name, factory)

    if args.auth:
        user, password = args.auth.split(":", 1)
        auth = GstRtspServer.RTSPAuth()
        token = GstRtspServer.RTSPToken()
        token.set_string("media.factory.role", "user")
        if args.auth_method == "digest":
            auth.add_digest(user, password, token)
            auth.set_supported_methods(GstRtsp.RTSPAuthMethod.DIGEST)
        else:
            auth.add_basic(GstRtspServer.RTSPAuth.make_basic(user, password), token)
        server.set_auth(auth)

    if server.attach(None) == 0:
        print("ERROR cannot listen", flush=True)
        sys.exit(1)
    print(f"READY {args.port}", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
