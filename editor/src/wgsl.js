// WGSL highlighting as a CodeMirror StreamLanguage: keywords, types, attributes, builtin
// functions, numbers and (nested) comments. Small on purpose; naga does the real parsing.
import { StreamLanguage } from '@codemirror/language';

const words = (s) => new Set(s.split(' '));
const KEYWORDS = words(
  'alias break case const const_assert continue continuing default diagnostic discard else enable ' +
    'fn for if let loop override requires return struct switch var while true false',
);
const TYPES = words(
  'bool f16 f32 i32 u32 vec2 vec3 vec4 vec2f vec3f vec4f vec2i vec3i vec4i vec2u vec3u vec4u ' +
    'vec2h vec3h vec4h mat2x2 mat2x3 mat2x4 mat3x2 mat3x3 mat3x4 mat4x2 mat4x3 mat4x4 mat2x2f ' +
    'mat3x3f mat4x4f array atomic ptr sampler texture_2d texture_storage_2d ' +
    'storage uniform workgroup private function read write read_write',
);
const BUILTINS = words(
  'abs acos all any arrayLength asin atan atan2 atomicAdd atomicLoad atomicMax atomicMin ' +
    'atomicStore atomicSub bitcast ceil clamp cos cross degrees determinant distance dot exp ' +
    'exp2 floor fma fract inverseSqrt length log log2 max min mix normalize pow radians select ' +
    'sign sin smoothstep sqrt step storageBarrier subgroupAdd subgroupBroadcast tan transpose ' +
    'trunc workgroupBarrier workgroupUniformLoad',
);

export const wgsl = StreamLanguage.define({
  name: 'wgsl',
  startState: () => ({ depth: 0 }),
  token(stream, state) {
    if (state.depth > 0) {
      while (!stream.eol()) {
        if (stream.match('/*')) state.depth++;
        else if (stream.match('*/')) {
          state.depth--;
          if (state.depth === 0) break;
        } else stream.next();
      }
      return 'blockComment';
    }
    if (stream.eatSpace()) return null;
    if (stream.match('//')) {
      stream.skipToEnd();
      return 'lineComment';
    }
    if (stream.match('/*')) {
      state.depth = 1;
      return 'blockComment';
    }
    if (stream.match(/^@[A-Za-z_][A-Za-z0-9_]*/)) return 'meta';
    if (stream.match(/^(0[xX][0-9a-fA-F]+|[0-9]+\.?[0-9]*([eE][+-]?[0-9]+)?|\.[0-9]+)[iufh]?/))
      return 'number';
    const w = stream.match(/^[A-Za-z_][A-Za-z0-9_]*/);
    if (w) {
      const word = w[0];
      if (KEYWORDS.has(word)) return 'keyword';
      if (TYPES.has(word)) return 'typeName';
      if (BUILTINS.has(word)) return 'standard';
      return 'variableName';
    }
    if (stream.match(/^[{}()[\]]/)) return 'bracket';
    stream.next();
    return 'operator';
  },
  languageData: { commentTokens: { line: '//', block: { open: '/*', close: '*/' } } },
});
