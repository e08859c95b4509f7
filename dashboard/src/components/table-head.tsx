/** A table's header row: one column header per name (`false` leaves a column out). */
export function TableHead({ columns }: { columns: (string | false)[] }) {
  return (
    <thead>
      <tr>
        {columns
          .filter((name) => name !== false)
          .map((name) => (
            <th scope="col" key={name}>
              {name}
            </th>
          ))}
      </tr>
    </thead>
  );
}
