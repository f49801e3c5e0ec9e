const test = require('node:test');
const assert = require('node:assert');
const { sub } = require('../src/math.js');

test('sub', () => {
  assert.strictEqual(sub(5, 2), 3);
});
