const test = require('node:test');
const assert = require('node:assert');
const { Greeter } = require('../src/text.js');

test('greet', () => {
  assert.strictEqual(new Greeter('x').greet(), 'hello x');
});
