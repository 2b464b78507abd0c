// The converter's error: its message names the file and the key that is wrong, or what is not supported.
export class ConvertError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ConvertError';
  }
}
