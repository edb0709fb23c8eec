// The few Node APIs the bot uses, declared here so that it builds with a bare TypeScript
// compiler and no npm install (a league builds submissions without a network). With npm at
// hand, `npm install --save-dev @types/node` gives the full API: then delete this file.

declare const process: {
  stdin: {
    setEncoding(encoding: "utf8"): void;
    on(event: "data", listener: (chunk: string) => void): void;
    on(event: "end", listener: () => void): void;
  };
  stdout: { write(text: string, callback?: () => void): boolean };
  exit(code: number): never;
};
