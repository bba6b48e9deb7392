/**
 * An aedes MQTT broker in its own process (killable like a real broker). argv: PORT [USERS.json].
 * With a users file ({"name": "password"}), only those logins are accepted; the file is read at
 * each connection, so a test can change it. Prints READY.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { Aedes } from 'aedes';

const port = Number(process.argv[2]);
const usersFile = process.argv[3];
const aedes = await Aedes.createBroker();
if (usersFile) {
  aedes.authenticate = (_client, username, password, done) => {
    const users = JSON.parse(readFileSync(usersFile, 'utf8')) as Record<string, string>;
    const ok = username !== undefined && users[username] === password?.toString();
    done(ok ? null : Object.assign(new Error('bad login'), { returnCode: 4 }), ok);
  };
}
const server = createServer((socket) => aedes.handle(socket));
server.listen(port, '127.0.0.1', () => process.stdout.write('READY\n'));
