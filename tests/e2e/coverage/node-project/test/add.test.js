const test = require('node:test');
const assert = require('node:assert');
const { add } = require('../src/math.js');

test('add', () => {
  assert.strictEqual(add(5, 2), 7);
});
