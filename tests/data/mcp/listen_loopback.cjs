// Preloaded with `node --require` into server-everything's streamableHttp transport, which calls
// app.listen(PORT) on every interface: this binds 127.0.0.1 instead (tests serve loopback only)
// and prints the port actually bound (PORT=0 asks for a free one) as TALARIA_TEST_PORT=N.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    const port = Number(args[0]);
    const callbacks = args.slice(1).filter((a) => typeof a === 'function');
    this.once('listening', () => process.stderr.write(`TALARIA_TEST_PORT=${this.address().port}\n`));
    return listen.call(this, port, '127.0.0.1', ...callbacks);
  }
  return listen.apply(this, args);
};
