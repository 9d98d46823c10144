// @ts-check
import { EventEmitter } from "events";

const DEFAULT_PORT = 8080;

/**
 * Starts the server.
 * @param {number} port
 */
export function startServer(port = DEFAULT_PORT) {
  function helper() {}
  return helper(port);
}

function* idGenerator() {
  let id = 0;
  while (true) yield id++;
}

export default class Server extends EventEmitter {
  #connections = 0;

  constructor(options) {
    super();
    this.options = options;
  }

  // Number of open connections.
  get connections() {
    return this.#connections;
  }

  set connections(value) {
    this.#connections = value;
  }

  static create() {
    return new Server({});
  }

  #log(message) {
    console.log(`[server] ${message} — ok`);
  }

  onClose = () => {
    this.#log("closed");
  };
}

export const formatName = (first, last) => `${first} ${last}`;

const handlers = {
  ping() {
    return "pong";
  },
};

let Plugin = class {
  install() {}
};

var legacy = function () {
  return "ünïcode";
};

module.exports = { handlers, legacy };
