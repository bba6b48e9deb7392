/** An aedes MQTT broker in its own process (killable like a real broker). argv: PORT. Prints READY. */
import { createServer } from 'node:net';
import { Aedes } from 'aedes';

const port = Number(process.argv[2]);
const aedes = await Aedes.createBroker();
const server = createServer((socket) => aedes.handle(socket));
server.listen(port, '127.0.0.1', () => process.stdout.write('READY\n'));
