import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { endianness } from 'node:os';
import { describe, it } from 'node:test';
import { peerUid, socketOwner, tableAddress } from '../../../src/ingest/peer-uid.js';

/** /proc/net/tcp as Linux writes it (x86: each address word little-endian), trimmed. */
const TABLE = [
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 0100007F:0FA0 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1',
  '   1: 0100007F:0FA0 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 2 1',
  '   2: 0100007F:D431 0100007F:0FA0 01 00000000:00000000 00:00000000 00000000  1001        0 3 1',
  '   3: 0500000A:D432 0800000A:0FA0 01 00000000:00000000 00:00000000 00000000  1002        0 4 1',
].join('\n');

describe("a local connection's peer user", () => {
  it('reads addresses as the kernel prints them', () => {
    assert.equal(tableAddress('0100007F', true), '127.0.0.1');
    assert.equal(tableAddress('7F000001', false), '127.0.0.1');
    assert.equal(
      tableAddress('0000000000000000FFFF00000100007F', true),
      '127.0.0.1',
      'IPv4 mapped into IPv6',
    );
    assert.equal(tableAddress('00000000000000000000000001000000', true), '0:0:0:0:0:0:0:1');
  });

  it(
    "finds the uid of the socket at the other end, by both ends' addresses and ports",
    {
      skip: endianness() === 'LE' ? false : 'the table above is as a little-endian host writes it',
    },
    () => {
      const us = { address: '127.0.0.1', port: 0x0fa0 };
      assert.equal(socketOwner(TABLE, { address: '127.0.0.1', port: 0xd431 }, us), 1001);
      assert.equal(socketOwner(TABLE, { address: '::ffff:127.0.0.1', port: 0xd431 }, us), 1001);
      assert.equal(
        socketOwner(TABLE, { address: '127.0.0.1', port: 0xd432 }, us),
        undefined,
        'same ports, other addresses',
      );
      assert.equal(socketOwner(TABLE, { address: '127.0.0.1', port: 1 }, us), undefined);
    },
  );

  it(
    "names this process's own uid for its own connection (Linux)",
    { skip: existsSync('/proc/net/tcp') ? false : 'no /proc/net/tcp: not Linux' },
    async (t) => {
      const accepted = new Promise<Socket>((resolve) => {
        const server = createServer(resolve);
        t.after(() => server.close());
        server.listen(0, '127.0.0.1', () => {
          const c = connect((server.address() as AddressInfo).port, '127.0.0.1');
          t.after(() => c.destroy());
        });
      });
      const s = await accepted;
      t.after(() => s.destroy());
      const uid = await peerUid(
        { address: s.remoteAddress!, port: s.remotePort! },
        { address: s.localAddress!, port: s.localPort! },
      );
      assert.equal(uid, process.getuid!());
    },
  );
});
