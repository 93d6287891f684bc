function f = read_npz(path)
% READ_NPZ  The arrays of an .npz archive (a zip of .npy files) as the fields of a struct.
%   f = read_npz('instance.npz') gives f.delta, f.secants, ...: float64 and integer arrays as
%   doubles, strings (numpy's unicode dtype '<U') as char row vectors, a 0-d array as a scalar.
%   Runs in MATLAB and GNU Octave (unzip and zip need Octave's system unzip/zip programs).
d = tempname();
mkdir(d);
unzip(path, d);                       % (its list of names is relative in Octave, full in MATLAB)
members = dir(fullfile(d, '*.npy'));
f = struct();
for k = 1:numel(members)
  f.(members(k).name(1:end - 4)) = read_npy(fullfile(d, members(k).name));
end
delete(fullfile(d, '*'));
rmdir(d);
end

function a = read_npy(file)
% One .npy file (format 1.0 or 2.0), little-endian: f8, f4, i8, i4, u1, b1 and unicode U.
fid = fopen(file, 'r', 'l');
cleanup = onCleanup(@() fclose(fid));
magic = fread(fid, 8, 'uint8=>double')';
if ~isequal(magic(1:6), [147 double('NUMPY')])
  error('read_npz:format', '%s is not a .npy file', file);
end
if magic(7) == 1
  header_length = fread(fid, 1, 'uint16');
else
  header_length = fread(fid, 1, 'uint32');
end
header = fread(fid, header_length, 'uint8=>char')';
descr = regexp(header, '''descr'':\s*''([<|>=])([a-zA-Z])(\d+)''', 'tokens', 'once');
fortran = ~isempty(regexp(header, '''fortran_order'':\s*True', 'once'));
shape = regexp(header, '''shape'':\s*\(([^)]*)\)', 'tokens', 'once');
shape = str2num(['[' strrep(shape{1}, ',', ' ') ']']); %#ok<ST2NM>  '()' gives [], '(5,)' gives 5
if strcmp(descr{1}, '>') && ~strcmp(descr{3}, '1')
  error('read_npz:format', '%s is big-endian', file);
end
kind = [descr{2} descr{3}];
count = prod(shape);                  % prod([]) = 1: a 0-d array holds one element
if descr{2} == 'U'                    % UTF-32 code points, str2double(descr{3}) per element
  a = char(fread(fid, count * str2double(descr{3}), 'uint32=>double')');
  return
end
types = struct('f8', 'double', 'f4', 'single', 'i8', 'int64', 'i4', 'int32', 'u1', 'uint8', 'b1', 'uint8');
if ~isfield(types, kind)
  error('read_npz:format', '%s has the unsupported dtype %s', file, kind);
end
a = double(fread(fid, count, ['*' types.(kind)]));
if numel(shape) >= 2
  if fortran
    a = reshape(a, shape);
  else                                % C order: reversed dimensions, then transposed back
    a = permute(reshape(a, fliplr(shape)), numel(shape):-1:1);
  end
end
end
