/* Text helpers. */
function shout(text) {
  return text.toUpperCase();
}

function whisper(text) {
  const lower = text.toLowerCase();
  return lower;
}

class Greeter {
  constructor(name) {
    this.name = name;
  }

  greet() {
    return `hello ${this.name}`;
  }

  wave() {
    return 'wave';
  }
}

module.exports = { shout, whisper, Greeter };
