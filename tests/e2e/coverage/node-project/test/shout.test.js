const test = require('node:test');
const assert = require('node:assert');
const { shout } = require('../src/text.js');

test('shout', () => {
  assert.strictEqual(shout('a'), 'A');
});
